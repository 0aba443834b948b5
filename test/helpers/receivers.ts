// Webhook receivers for tests (HTTP servers on 127.0.0.1 with a handler of the test's own), closed
// all at once at the end of the file, and a percentile for latency assertions.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function receivers() {
  const servers: Server[] = [];
  return {
    /** Starts a server with `handler`; resolves with its webhook url. */
    async listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
      const s = createServer(handler);
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      servers.push(s);
      return `http://127.0.0.1:${(s.address() as AddressInfo).port}/hooks`;
    },
    /** Closes every server, open connections included (black holes hold theirs). */
    close(): void {
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
    },
  };
}

/** The p-th percentile (nearest rank) of xs. */
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
