// The one per-file server fixture, under the name this package's tests know it by.
export { useTestPostgres as useTestServer } from '@tether/testkit';
