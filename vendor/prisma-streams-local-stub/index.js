// `prisma dev` is not used by this project (it runs its own embedded PGlite); this stand-in keeps
// the Node 22-only package out of the install. See docs/decisions.md.
export async function startLocalDurableStreamsServer() {
  throw new Error('prisma dev is not supported in this project: @prisma/streams-local is replaced by a stub (docs/decisions.md).');
}
