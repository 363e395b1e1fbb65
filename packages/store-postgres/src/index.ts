// TODO(issue 16): openPostgresStore.
export const VERSION = '0.1.0';
