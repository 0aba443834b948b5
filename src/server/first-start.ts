// Pieces of the server's start kept out of src/main.ts: the bootstrap merchant's dashboard user
// (created with the merchant, its password printed once in the banner) and the CLI's command
// socket on the embedded database (src/server/control-socket.ts).
import { bootstrapDashboardUser } from '../domain/merchants/dashboard.ts';
import type { Services } from '../platform/env.ts';
import { runCommand } from './commands.ts';
import { listenForCli } from './control-socket.ts';

/**
 * Creates the dashboard user of a just-created bootstrap merchant and returns the banner lines that
 * show its email and password — the only place the password ever appears (never logged).
 */
export async function dashboardLogin(services: Services, merchantId: string): Promise<string[]> {
  const login = await bootstrapDashboardUser(services.db.prisma, merchantId, services.config.publicBaseUrl);
  if (!login) return [];
  services.log.info({ merchant_id: merchantId, email: login.email }, 'dashboard user created for the test merchant');
  return [
    '  Sign in to the dashboard (the password is shown only this once):',
    '',
    `    dashboard      ${services.config.publicBaseUrl}/dashboard`,
    `    email          ${login.email}`,
    `    password       ${login.password}`,
    '',
  ];
}

/**
 * On the embedded database, lets the CLI reach this server's database while it runs: commands
 * sent to DATA_DIR/billing.sock run here. Returns the stop function (nothing to stop on PostgreSQL,
 * where the CLI opens the database itself).
 */
export async function serveCli(services: Services): Promise<() => Promise<void>> {
  if (services.db.kind !== 'pglite') return async () => {};
  // Not being able to serve the CLI (a DATA_DIR path too long for a socket name, a platform
  // without Unix sockets) must not keep the server from starting: the CLI then says so.
  return listenForCli(
    services.config.DATA_DIR,
    (argv) => {
      services.log.info({ command: argv.slice(0, 2).join(' ') }, 'CLI command run for the command socket');
      return runCommand(argv, { db: services.db, where: 'server', onKeyRevoked: (clientId) => services.auth.invalidate(clientId) });
    },
    (err) => services.log.error({ err }, 'CLI command failed'),
  ).catch((err: unknown) => {
    services.log.warn({ err, data_dir: services.config.DATA_DIR }, 'cannot listen for CLI commands on DATA_DIR/billing.sock: stop the server to use the CLI');
    return async () => {};
  });
}
