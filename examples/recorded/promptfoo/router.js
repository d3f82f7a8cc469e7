// An offline support router for a real promptfoo run: the ambiguous message gets a fixed,
// shuffled sequence of 14 "refund" and 12 "escalate" answers, one per call, in call order.
const SPLIT = 'This is ridiculous, refund order 1003 now.';
const seq = [];
for (let i = 0; i < 14; i++) seq.push('refund');
for (let i = 0; i < 12; i++) seq.push('escalate');
let s = 2026;
function rand() { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; }
for (let i = seq.length - 1; i > 0; i--) { const j = Math.floor(rand() * (i + 1)); [seq[i], seq[j]] = [seq[j], seq[i]]; }
let n = 0;
class Router {
  id() { return 'file://router.js'; }
  async callApi(prompt, context) {
    const m = context.vars.message;
    let route = 'faq';
    if (m === SPLIT) route = seq[n++ % seq.length];
    else if (/refund/i.test(m)) route = 'refund';
    return { output: JSON.stringify({ route }), tokenUsage: { total: 20, prompt: 12, completion: 8 } };
  }
}
module.exports = Router;
