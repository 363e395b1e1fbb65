import type { AcpHost } from '@tether/acp';
import type { TetherSurface } from '@tether/protocol';

/** The reads an AcpHost adds to Tether's surface. */
export type AcpReads = Pick<AcpHost, 'listSessionPage' | 'providerCapabilities'>;

/**
 * The surface with the ACP reads laid over it. A proxy, because the runtime is a class whose
 * methods need their own `this` (its private fields), and copying its methods one by one would
 * silently miss a command the protocol adds later.
 */
export function surfaceWithReads(surface: TetherSurface, reads: AcpReads): AcpHost {
  return new Proxy(surface, {
    get(target, key) {
      if (key in reads) return reads[key as keyof AcpReads];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as AcpHost;
}
