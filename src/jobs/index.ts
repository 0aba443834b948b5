// Every kind of background job, by area. Domain code enqueues (src/jobs/queue.ts); the handlers
// registered here do the work when it is due.
import { JobRegistry } from './runner.ts';

export function createJobRegistry(): JobRegistry {
  const registry = new JobRegistry();
  return registry;
}
