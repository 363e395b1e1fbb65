import { useEffect, useState } from 'react';
import type { TetherClient } from '@tether/client';
import type { ModelDescription } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';

// The list is built into the agent, so one answer per page and provider is enough; a failure is not kept.
const asked = new WeakMap<TetherClient, Map<string, Promise<readonly ModelDescription[]>>>();

function modelsOf(client: TetherClient, provider: string | undefined): Promise<readonly ModelDescription[]> {
  const byProvider = asked.get(client) ?? new Map<string, Promise<readonly ModelDescription[]>>();
  asked.set(client, byProvider);
  const key = provider ?? '';
  let models = byProvider.get(key);
  if (models === undefined) {
    models = client.listModels(provider).then((list) => list.models);
    byProvider.set(key, models);
    models.catch(() => byProvider.delete(key));
  }
  return models;
}

/**
 * The models a provider's agent offers, for a picker (the daemon's default provider when none is
 * named). Empty until they come, and when they cannot be listed: the field stays free text.
 */
export function useModelList(provider: string | undefined, enabled = true): readonly ModelDescription[] {
  const { client } = useDaemon();
  const [models, setModels] = useState<readonly ModelDescription[]>([]);
  useEffect(() => {
    if (!enabled) return;
    let stopped = false;
    modelsOf(client, provider).then(
      (listed) => {
        if (!stopped) setModels(listed);
      },
      () => {
        // No list (an agent without one, an older daemon): typing a model name still works.
      },
    );
    return () => {
      stopped = true;
    };
  }, [client, provider, enabled]);
  return models;
}
