import { isIPv4 } from 'node:net';

/**
 * Whether a host (a name, an address, an IPv6 address with or without brackets) is this machine's
 * loopback: `localhost`, an IPv4 literal in 127.0.0.0/8, or `::1`. Only literals count: a name that
 * merely starts with "127." (127.0.0.1.example) is whatever its DNS says, anywhere.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (name === 'localhost' || name === '::1' || name === '[::1]') return true;
  return isIPv4(name) && name.startsWith('127.');
}
