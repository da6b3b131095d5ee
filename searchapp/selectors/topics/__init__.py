"""Reads behind the topics: the corpus background and the topic facet."""
