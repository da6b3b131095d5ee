"""The web's doors: pages, the API, their forms, guards and middleware."""
