// Applies the saved theme before the page paints, so a dark choice never flashes light.
// A classic (blocking) script on purpose: the Content-Security-Policy forbids inline ones.
(() => {
  try {
    const saved = localStorage.getItem('localsqs-theme');
    if (saved === 'light' || saved === 'dark') document.documentElement.dataset.theme = saved;
  } catch {
    // Storage may be off (private windows); the system preference applies.
  }
})();
