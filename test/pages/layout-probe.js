/* global document, NodeFilter, window */
// Loaded into each hosted page by test/pages/hosted-pages.test.ts (a classic script, so the
// TypeScript project needs no DOM types). `layoutProbe(specs)` finds each token matching a spec's
// pattern in the text under the spec's selector, across text nodes (markup inside a token is no
// hiding place), and tells whether its boxes sit on more than one line; and how far the document
// is wider than the window.
window.layoutProbe = function layoutProbe(specs) {
  const broken = [];
  for (const spec of specs) {
    for (const root of Array.from(document.querySelectorAll(spec.within))) {
      const nodes = [];
      let text = '';
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        nodes.push({ node, start: text.length });
        text += node.textContent ?? '';
      }
      const at = (offset) => {
        const found = nodes.filter((entry) => entry.start <= offset).at(-1);
        return [found.node, offset - found.start];
      };
      for (const match of text.matchAll(new RegExp(spec.pattern, 'g'))) {
        const range = document.createRange();
        range.setStart(...at(match.index));
        // The end is just past the token's last character, in that character's text node.
        const [endNode, endOffset] = at(match.index + match[0].length - 1);
        range.setEnd(endNode, endOffset + 1);
        const boxes = Array.from(range.getClientRects()).filter((box) => box.width > 0);
        const middles = boxes.map((box) => box.top + box.height / 2);
        const lowest = Math.min(...boxes.map((box) => box.height));
        if (Math.max(...middles) - Math.min(...middles) > lowest / 2) {
          broken.push(`"${match[0]}" in <${root.tagName.toLowerCase()}>`);
        }
      }
    }
  }
  return { overflow: document.documentElement.scrollWidth - window.innerWidth, broken };
};
