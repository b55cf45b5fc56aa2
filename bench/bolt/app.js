// Slack's Bolt for JavaScript with its HTTP receiver, as most Slack apps
// run it: it verifies each request's signature, parses the event, runs the
// (empty) message or app_mention listener and acks. The peer of brain's intake in the
// load script (go run ./bench/load intake). Install: npm ci --prefix bench/bolt
const { App, LogLevel } = require('@slack/bolt');

const app = new App({
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  // A fixed authorization: Bolt would otherwise call auth.test for each
  // event. The API URL points nowhere, so nothing leaves the machine.
  authorize: async () => ({ botToken: 'xoxb-bench', botId: 'B0BENCH', botUserId: 'U0BENCH' }),
  clientOptions: { slackApiUrl: 'http://127.0.0.1:9/api/' },
  logLevel: LogLevel.ERROR,
});

app.message(async () => {});
app.event('app_mention', async () => {});
app.error(async (err) => { console.error(err); });

(async () => {
  await app.start(Number(process.env.PORT));
})();
