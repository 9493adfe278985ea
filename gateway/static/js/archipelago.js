// placeholder: the archipelago screen
export function createScreen(el, ctx) {
  return { render(view) { el.textContent = JSON.stringify(view).slice(0, 200); }, destroy() {} };
}
