// Slack's Bolt for JavaScript with the HTTP receiver, as most Slack apps
// run it: it verifies each request's signature, parses the event, runs the
// (empty) listeners and acks. The peer of brain's intake in the load
// script (go run ./bench/load intake). Install: npm ci --prefix bench/bolt
const { App, LogLevel } = require('@slack/bolt');

const app = new App({
  token: 'xoxb-bench',
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  tokenVerificationEnabled: false, // no auth.test: nothing leaves the machine
  logLevel: LogLevel.ERROR,
});

app.message(async () => {});

(async () => {
  await app.start(Number(process.env.PORT));
})();
