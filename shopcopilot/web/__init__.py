"""The web demo: FastAPI app, SQLite session store, demo controller and static page."""
