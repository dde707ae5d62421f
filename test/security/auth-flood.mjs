// A flood of wrong basic-auth passwords, run as a process of its own by auth-flood.test.ts (so
// that the test process, which times the real scrape, is not the one busy sending them):
//   node auth-flood.mjs <url> <clients> <user>
// <clients> requests are always in flight, each over its own keep-alive connection, each with a
// password never sent before. It prints "flooding" once every client has had a first answer,
// "answers <n>" each time <clients> more answers have come, and on SIGTERM one line of JSON, the
// number of answers of each status (or error code), then exits.
import { Agent, request } from "node:http";

const [url, clientsText, user] = process.argv.slice(2);
const clients = Number(clientsText);
const agent = new Agent({ keepAlive: true, maxSockets: clients });
const counts = {};
let sent = 0;
let answers = 0;
let firstAnswers = 0;
let stopping = false;

function answered(what, first) {
  counts[what] = (counts[what] ?? 0) + 1;
  if (++answers % clients === 0) process.stdout.write(`answers ${answers}\n`);
  if (first && ++firstAnswers === clients) process.stdout.write("flooding\n");
}

function send(first) {
  if (stopping) return;
  const auth = Buffer.from(`${user}:wrong-${process.pid}-${sent++}`).toString("base64");
  const req = request(url, { agent, headers: { authorization: `Basic ${auth}` } }, (res) => {
    res.resume();
    res.on("end", () => {
      answered(res.statusCode, first);
      send(false);
    });
  });
  req.on("error", (err) => {
    answered(err.code ?? "error", first);
    setTimeout(() => send(false), 50); // a refused connection: try again soon, not in a busy loop
  });
  req.end();
}

for (let c = 0; c < clients; c++) send(true);
process.on("SIGTERM", () => {
  stopping = true;
  process.stdout.write(`${JSON.stringify(counts)}\n`);
  agent.destroy();
  process.exit(0);
});
