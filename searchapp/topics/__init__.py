"""Topics of a result list: clustering, labels, words per language, memory, the map."""
