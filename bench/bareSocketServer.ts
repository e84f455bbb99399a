/**
 * The reference for bench/sockets.ts: a bare Socket.IO server (no adapter, no auth, no database)
 * with the gateway's namespace and transport, so the gateway's memory per socket can be read as a
 * ratio to what Socket.IO alone needs. Listens on PORT; prints `ready` when it does.
 */
import { createServer } from 'node:http';
import { Server } from 'socket.io';

const port = Number(process.env.PORT);
const http = createServer();
const io = new Server(http, { transports: ['websocket'], serveClient: false });
io.of('/oan').on('connection', () => undefined);
http.listen(port, '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => {
  void io.close();
  process.exit(0);
});
