// A proxy for tests of a peer that goes silent.
/**
 * A TCP proxy on 127.0.0.1 in front of `port` that can stop passing bytes while keeping every connection open: a host
 * that drops packets silently (a database, a server), where nothing fails, it only never answers. `stop` closes every
 * connection.
 */
export function silentableProxy(port: number): { port: number; silent(on: boolean): void; stop(): void } {
  let silent = false;
  type Link = { upstream: Bun.Socket<undefined> | null; early: Uint8Array[] };
  const listener = Bun.listen<Link>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { upstream: null, early: [] };
        const upstream = await Bun.connect({
          hostname: "127.0.0.1",
          port,
          socket: {
            data: (_, chunk) => void (silent || client.write(chunk)),
            close: () => void client.end(),
            error: () => void client.end(),
          },
        });
        client.data.upstream = upstream;
        for (const chunk of client.data.early) upstream.write(chunk);
        client.data.early = [];
      },
      data(client, chunk) {
        if (silent) return;
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.early.push(new Uint8Array(chunk));
      },
      close: (client) => void client.data.upstream?.end(),
      error: (client) => void client.data.upstream?.end(),
    },
  });
  return { port: listener.port, silent: (on) => void (silent = on), stop: () => listener.stop(true) };
}
