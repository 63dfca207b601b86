// Starts s3rver (a real S3-compatible server) with one bucket on a free port and prints the port. Run with node, not
// bun: one of s3rver's dependencies (logform) ships a tsconfig.json whose baseUrl bun honours, so that it loads a
// hoisted older safe-stable-stringify instead of its own, and every request fails. Usage: node s3rver-main.cjs DIR BUCKET
const S3rver = require("s3rver");
const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
server.run().then(({ port }) => process.stdout.write(`${port}\n`));
// Stops with its parent: the test's process closes our stdin.
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
