import { AgentError } from '@tether/protocol';

/**
 * The refusal every store gives a unit carrying a receipt whose commandId is already stored
 * (store_failure, details.reason receipt_exists): nothing of the unit is written. Another runtime
 * sharing the store carried the command out first; the runtime answers with the stored receipt.
 */
export function receiptExists(cause?: unknown): AgentError {
  return new AgentError({
    code: 'store_failure',
    message:
      'A receipt for that commandId is already stored (the command was carried out first elsewhere); nothing of this change was written. Read the stored receipt (findReceipt) and answer with it.',
    details: { reason: 'receipt_exists' },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Whether a store refused a unit because its receipt's commandId is already stored. */
export function isReceiptExists(error: unknown): error is AgentError {
  return (
    AgentError.isInstance(error) && error.code === 'store_failure' && error.details?.['reason'] === 'receipt_exists'
  );
}
