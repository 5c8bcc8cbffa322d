// Preload (`node --import`) for a server that cannot be told where to listen: `promptfoo view` 0.123.1 calls
// `httpServer.listen(port, callback)`, which binds every interface. Tests serve on loopback only, so a listen()
// given a port and no host gets 127.0.0.1; every other call passes through untouched.
import net from "node:net";

const listen = net.Server.prototype.listen;
const isPort = (value) => typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));

net.Server.prototype.listen = function (...args) {
  const [first, second] = args;
  if (isPort(first) && (args.length === 1 || typeof second === "function")) {
    args.splice(1, 0, "127.0.0.1"); // listen(port[, callback]) → listen(port, host[, callback])
  } else if (first && typeof first === "object" && first.port !== undefined && first.host === undefined && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" }; // listen({port}) → listen({port, host})
  }
  return listen.apply(this, args);
};
