// @ts-check
// The Durable Object exports in every build but workerd's (scripts/bundle.mjs
// resolves `#edge` to js/queue/durable.js there): the same names, which say
// where they work (js/load/elsewhere.js), so that browsers do not download
// the Durable Object code.
import { only, stub } from '../load/elsewhere.js';

export class DurableObjectStore extends stub('DurableObjectStore', 'queue') {
  static remote() {
    return only('DurableObjectStore.remote', 'queue');
  }
}
export const TaskQueueObject = stub('TaskQueueObject', 'queue');
export const enqueueTo = () => only('enqueueTo', 'queue');
