"""The class's own pages (Practice, Gradebook, Analytics): Streamlit runs each by its path; nothing imports them."""
