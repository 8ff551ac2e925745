// The waveform of a clip the server plays as stored but does not decode (FLAC, Ogg, MP3),
// drawn in the browser (Streamlit Components v2): the browser decodes the clip with Web Audio
// and draws each column's span from the smallest to the largest sample of the channels mixed
// down, with a faint zero line, as the server draws a WAV's. Text is set with textContent.
//
// The host element (class tfb-wave) says what it shows: data-state ("drawn", "failed", or
// empty while it decodes), data-seconds, data-channels.

/** Each of `width` columns' smallest and largest sample of `channels` (Float32Arrays of one
 * length) mixed down; a column past the samples repeats the last. */
export function spans(channels, width) {
  const n = channels.length ? channels[0].length : 0;
  const lo = new Float32Array(width);
  const hi = new Float32Array(width);
  if (!n) return [lo, hi];
  for (let c = 0; c < width; c++) {
    let a = Math.floor((c * n) / width);
    let b = Math.max(a + 1, Math.floor(((c + 1) * n) / width));
    if (a >= n) a = n - 1;
    if (b > n) b = n;
    let min = Infinity;
    let max = -Infinity;
    for (let i = a; i < b; i++) {
      let v = 0;
      for (const ch of channels) v += ch[i];
      v /= channels.length;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    lo[c] = min;
    hi[c] = max;
  }
  // each column reaches the one before it: the samples are joined, not dots
  for (let c = width - 1; c > 0; c--) {
    lo[c] = Math.min(lo[c], hi[c - 1]);
    hi[c] = Math.max(hi[c], lo[c - 1]);
  }
  return [lo, hi];
}

function draw(canvas, data, channels) {
  const ratio = window.devicePixelRatio || 1;
  const w = data.width;
  const h = data.height;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.clearRect(0, 0, w, h);
  const mid = (h - 1) / 2;
  g.fillStyle = data.mid;
  g.fillRect(0, Math.round(mid), w, 1);
  const [lo, hi] = spans(channels, w);
  g.fillStyle = data.color;
  const clip = (v) => Math.max(-1, Math.min(1, v));
  for (let c = 0; c < w; c++) {
    const top = Math.round(mid - clip(hi[c]) * mid);
    const bottom = Math.round(mid - clip(lo[c]) * mid);
    g.fillRect(c, top, 1, Math.max(1, bottom - top + 1));
  }
}

const shown = new WeakMap(); // host element -> the URL drawn (or being drawn) there

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  const root = parentElement.querySelector(".tfb-wave");
  const canvas = root.querySelector("canvas");
  const caption = root.querySelector(".tfb-wave-caption");
  if (shown.get(root) === data.src) return;
  shown.set(root, data.src);
  root.dataset.state = "";
  caption.textContent = "waveform · decoding\u2026";
  fetch(data.src)
    .then((r) => {
      if (!r.ok) throw new Error(`the server answered ${r.status}`);
      return r.arrayBuffer();
    })
    .then((buf) => new OfflineAudioContext(1, 1, 44100).decodeAudioData(buf))
    .then((audio) => {
      if (shown.get(root) !== data.src) return;
      const channels = [];
      for (let c = 0; c < audio.numberOfChannels; c++) channels.push(audio.getChannelData(c));
      draw(canvas, data, channels);
      root.dataset.seconds = audio.duration.toFixed(3);
      root.dataset.channels = String(audio.numberOfChannels);
      root.dataset.state = "drawn";
      caption.textContent = `waveform \u00b7 0 \u2013 ${audio.duration.toFixed(2)} s \u00b7 decoded by the browser`;
    })
    .catch((err) => {
      if (shown.get(root) !== data.src) return;
      root.dataset.state = "failed";
      const why = err && err.message ? err.message : String(err);
      caption.textContent = `No waveform: the browser could not decode this clip (${why}).`;
    });
}
