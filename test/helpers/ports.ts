// A port for a server a test or a bench starts itself (and may restart on the same port): random, below the
// kernel's ephemeral range (32768–60999 on Linux), which the outgoing connections of every test and
// server take their local ports from — a random port inside it was now and then already in use by
// one of them (EADDRINUSE in CI under load).
export const testPort = (): number => 10_000 + Math.floor(Math.random() * 22_000);
