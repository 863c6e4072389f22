"""python -m transformer.pretrained REPO_ID: download a supported model into the Hugging Face cache (download.py)."""
from .download import main

main()
