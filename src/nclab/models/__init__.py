"""Models: the UFM family, word networks h / h*, MLPs with linear heads, ResNet / transformer blocks."""
