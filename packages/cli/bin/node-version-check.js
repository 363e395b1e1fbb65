// Plain JavaScript on purpose, in syntax old Node versions parse: it runs before anything that
// needs Node >= 22.13 (node:sqlite) is loaded, to say what to do instead of printing a stack trace.

/** The oldest Node.js Tether runs on: node:sqlite loads without a flag from 22.13 (22.12 refuses it). */
export const minimumNodeVersion = [22, 13];

/**
 * The one line to print when `version` (process.versions.node, e.g. "20.20.2") is too old, or
 * null when it is new enough. `inRepository`: tether runs from a checkout that has the ./dev script.
 */
export function nodeVersionProblem(version, inRepository) {
  const [major, minor] = String(version)
    .split('.')
    .map((part) => Number.parseInt(part, 10));
  const [needMajor, needMinor] = minimumNodeVersion;
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  const fix = inRepository
    ? 'In this repository run it through ./dev, which uses the Node it installs in .tools/ (e.g. ./dev npx tether run "…").'
    : 'Install Node.js 22.13 or newer (24 LTS recommended: https://nodejs.org, or nvm install 24).';
  return `tether: Tether needs Node.js >= ${needMajor}.${needMinor}, but this is Node.js ${version} (${process.execPath}). ${fix}`;
}
