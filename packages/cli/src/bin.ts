#!/usr/bin/env node
import { processContext } from './cli-context.js';
import { main } from './main.js';

const code = await main(process.argv.slice(2), processContext());
process.exitCode = code;
