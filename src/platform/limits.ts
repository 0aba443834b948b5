// Request limits shared by the server and the REST router.
export const MAX_BODY_BYTES = 1024 * 1024;
