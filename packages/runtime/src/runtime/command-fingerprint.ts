import { hash } from 'node:crypto';
import type { Command } from '@tether/protocol';

/**
 * JSON with every object's keys sorted and undefined members left out. Written to build the text in
 * one pass: it runs on every command before its effects are committed, and the spread, sort and
 * join of each object's entries it was built with cost as much as the hash.
 */
function canonical(value: unknown, skippedKey?: string): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index += 1) {
      // As Array.prototype.join writes what JSON cannot hold (undefined): nothing.
      text += `${index === 0 ? '' : ','}${canonical(value[index]) ?? ''}`;
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const entry = record[key];
    if (entry === undefined || key === skippedKey) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:${canonical(entry)}`;
    first = false;
  }
  return `${text}}`;
}

/**
 * Identifies what a command asks for, without its commandId. A hash, so a redacted prompt's
 * text is not kept in the receipts table. Stored with each receipt, so it must never change for the
 * same command (command-fingerprint.test.ts holds known values).
 */
export function fingerprintCommand(command: Command): string {
  return hash('sha256', canonical(command, 'commandId')!);
}

/**
 * A command's fingerprint, computed when first asked for: when its receipt is written, or when
 * another command with its commandId must be told apart from it. A stop's receipt is written once
 * the run has ended, so its fingerprint is no longer computed on the way to the agent (~0.04 ms of
 * a stop's ~0.23 before the request is written, docs/benchmarks.md "Fewer pages a commit").
 */
export type CommandFingerprint = () => string;

export function lazyFingerprint(command: Command): CommandFingerprint {
  let value: string | undefined;
  return () => {
    value ??= fingerprintCommand(command);
    return value;
  };
}
