"""Commands that compose capabilities (install, then the doctor); the layer above them."""
