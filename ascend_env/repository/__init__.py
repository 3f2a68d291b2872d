"""The verified local repository of vendor files and wheels that install and image read."""
