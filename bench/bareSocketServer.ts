/**
 * The reference for bench/sockets.ts: a bare Socket.IO server (no adapter, no auth, no database)
 * with the gateway's namespace and transport, so the gateway's memory per socket and its fan-out can
 * be read as ratios to what Socket.IO alone needs. A socket joins the room its handshake names
 * (`auth.room`, an account's stand-in). Listens on PORT; prints `ready` when it does. Each line
 * `emit <rooms>` on stdin emits one envelope-sized text (`oan:event`) to every room 0…rooms-1, as a
 * gateway does once per account when its push stream delivers; it prints `emitted` after.
 */
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { Server } from 'socket.io';

const port = Number(process.env.PORT);
const http = createServer();
const io = new Server(http, { transports: ['websocket'], serveClient: false });
const oan = io.of('/oan');
oan.on('connection', (socket) => {
  const room = (socket.handshake.auth as { room?: unknown }).room;
  if (typeof room === 'string') void socket.join(room);
});
/** About an OAN envelope's size (bench/sockets.ts sends ~300–500 bytes). */
const TEXT = JSON.stringify({ v: 1, seq: '1', type: 'gofer_message', payload: { text: 'x'.repeat(300) } });
createInterface({ input: process.stdin }).on('line', (line) => {
  const [what, rooms] = line.split(' ');
  if (what !== 'emit') return;
  for (let r = 0; r < Number(rooms); r++) oan.to(String(r)).emit('oan:event', TEXT);
  console.log('emitted');
});
http.listen(port, '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => {
  void io.close();
  process.exit(0);
});
