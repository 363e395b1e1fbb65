/** A mistake in how `tether` was called: exit code 2, with the usage line. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
