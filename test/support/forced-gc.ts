import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full garbage collection of this process, now: for tests of what must survive one (a timer
 * whose only holder is a weak reference). `--expose-gc` is set at run time and `gc` read from a
 * fresh context, since jest's own contexts were made before the flag and have no `gc`.
 */
export function forceGc(): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
}
