/** A failure the person should read now (role=alert), or nothing. */
export function FailureNotice({ failure }: { readonly failure: string | null }) {
  if (failure === null) return null;
  return (
    <p className="notice notice-error" role="alert">
      {failure}
    </p>
  );
}
