/**
 * A stand-in for a Cloudflare Access team's key endpoint, on loopback (node:http): it serves
 * `GET /cdn-cgi/access/certs` as Access does, with whatever key set a test last put at
 * `PUT /_control/keys` (a JWKS). Tests sign their own tokens with the private halves (jose, in
 * workerd), so they hold the keys and the Worker only ever sees what Access would publish.
 */
import { createServer, type Server } from "node:http";

export interface KeyServer {
  url: string;
  close(): Promise<void>;
}

export async function startKeyServer(port: number): Promise<KeyServer> {
  let keys = JSON.stringify({ keys: [] });
  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/cdn-cgi/access/certs") {
      res.writeHead(200, { "content-type": "application/json" }).end(keys);
      return;
    }
    if (req.method === "PUT" && req.url === "/_control/keys") {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk));
      req.on("end", () => {
        keys = body;
        res.writeHead(204).end();
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
