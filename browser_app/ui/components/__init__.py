"""Elements drawn in the browser (Streamlit Components v2, no iframe): each is HTML, CSS and
JavaScript shipped in ``assets/`` and loading nothing from anywhere but the app's own server,
with a Python module that says what it is sent and what it sends back.

- :mod:`.gallery`: the gallery grid (tiles, captions, badges, marks, the focus ring, the
  keys of a review by keyboard).
- :mod:`.player`: a clip's player (the frame with its boxes, a slider, play and pause at the
  clip's rate, a film strip), playing with no run of the script per frame.
- :mod:`.waveform`: the waveform of audio the server plays as stored but does not decode
  (FLAC, Ogg, MP3), decoded and drawn by the browser."""
