"""tfrecord-browser's front end: the Streamlit app and the command line."""
