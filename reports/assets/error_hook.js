
window.__ktuneErrors = [];
window.addEventListener('error', function (e) { window.__ktuneErrors.push(String(e.message)); });
(function () {
  var original = console.error;
  console.error = function () {
    window.__ktuneErrors.push(Array.prototype.map.call(arguments, String).join(' '));
    return original.apply(console, arguments);
  };
})();
