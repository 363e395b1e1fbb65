import { useEffect, useState } from 'react';
import type { Options } from 'react-markdown';

type RehypePlugins = NonNullable<Options['rehypePlugins']>;

const noPlugins: RehypePlugins = [];
/** A fence opening a code block (the highlighter only ever colours fenced code that names a language). */
const fence = /^ {0,3}(`{3,}|~{3,})/m;
let loaded: RehypePlugins | undefined;
let loading: Promise<RehypePlugins> | undefined;

/**
 * rehype-highlight with highlight.js's common languages weighs about as much as the rest of the UI
 * (~180 KB, ~54 KB gzipped), so it is a chunk of its own, fetched the first time an answer has a
 * code fence. Only fences that name a language are coloured (detect: false: guessing would cost
 * time on every streamed delta).
 */
export function loadCodeHighlighter(): Promise<RehypePlugins> {
  loading ??= import('rehype-highlight').then(
    ({ default: rehypeHighlight }) => {
      // One transformer for every render: attaching rehype-highlight builds a new highlight.js instance
      // (grammars compiled again on first use), and react-markdown attaches its plugins on every render.
      const highlight = rehypeHighlight({ detect: false });
      loaded = [() => highlight];
      return loaded;
    },
    (error: unknown) => {
      // Tried again by the next answer that needs it (e.g. the daemon was restarting).
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The rehype plugins for `text`: none until the highlighter has loaded, then a re-render with it. */
export function useCodeHighlighter(text: string): RehypePlugins {
  const wanted = loaded === undefined && fence.test(text);
  const [, setLoaded] = useState(false);
  useEffect(() => {
    if (!wanted) return;
    let mounted = true;
    // A chunk that cannot be fetched leaves the code uncoloured, which is all it costs.
    loadCodeHighlighter().then(
      () => mounted && setLoaded(true),
      () => undefined,
    );
    return () => {
      mounted = false;
    };
  }, [wanted]);
  return loaded ?? noPlugins;
}
