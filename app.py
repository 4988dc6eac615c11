"""Attention Lab: the Streamlit entry point (routes only; lessons live in pages/)."""

import streamlit as st

st.set_page_config(page_title="Attention Lab", layout="wide")
st.title("Attention Lab")
st.write("The course pages are on their way. Meanwhile: `python -m grader`.")
