import type { ModelDescription } from '@tether/protocol';

/** How a model reads in a picker: its name, and what it is when the agent says. */
export function modelLabel(model: ModelDescription): string {
  const name = model.displayName === '' ? model.id : model.displayName;
  return model.description === '' ? name : `${name} — ${model.description}`;
}

/**
 * The suggestions of a model field: a <datalist> the field names with `list`, so the browser offers
 * the agent's models while any other name can still be typed.
 */
export function ModelOptions({ id, models }: { readonly id: string; readonly models: readonly ModelDescription[] }) {
  return (
    <datalist id={id}>
      {models.map((model) => (
        <option key={model.id} value={model.id} label={modelLabel(model)} />
      ))}
    </datalist>
  );
}
