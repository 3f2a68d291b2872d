"""Container images: render the build context, build, validate, run on a device."""
