import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';
import './styles/base.css';
import './styles/layout.css';
import './styles/conversation.css';
import './styles/cards.css';
import './styles/code-highlight.css';
import './styles/workspace.css';

const container = document.getElementById('root');
if (container === null) throw new Error('index.html has no #root element.');
createRoot(container).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
