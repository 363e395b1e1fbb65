/**
 * A full collection on demand, so heap figures compare live objects, not whatever garbage was
 * pending. The flag, set after start-up, reaches only contexts created later: hence the new context.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc');

/** A full collection, then the heap in use (bytes). */
export function heapAfterGarbageCollection() {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}
