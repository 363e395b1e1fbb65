/**
 * The CLI's reason token for a refusal: its error_code, or else the token its error text starts
 * with ("cwd_not_found: …"); never the text itself, which is the CLI's prose. Undefined when
 * neither carries one.
 */
export function refusalReason(
  errorCode: string | null | undefined,
  error: string | null | undefined,
): string | undefined {
  if (typeof errorCode === 'string' && /^[a-z_]{1,60}$/.test(errorCode)) return errorCode;
  return /^([a-z_]{1,60}):/.exec(error ?? '')?.[1];
}
