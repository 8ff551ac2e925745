"""The Streamlit app: the router (:mod:`.app`), the one page frame (:mod:`.frame`), the
session's values (:mod:`.state`, the only package touching session state and query
parameters), every cache (:mod:`.services`), opening sources (:mod:`.source`,
:mod:`.opening`), page links
(:mod:`.navigation`), the reusable pieces (:mod:`.widgets`) and one module per page
(:mod:`.pages`).

Data comes from the layers below (:mod:`codec`, :mod:`browser_app.edits`,
:mod:`browser_app.export`, :mod:`browser_app.view`); nothing here computes what they already
do, it only draws it and reacts to the person.
"""
