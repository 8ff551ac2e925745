"""Pure presentation: codec values in, rows, captions, text and picture bytes out.

Nothing here imports Streamlit or touches session state; every function takes codec objects or
plain values and returns plain data, so it can be tested and timed without a server.
"""
