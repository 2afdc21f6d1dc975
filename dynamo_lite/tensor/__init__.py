"""The strided tensor core: dtypes, devices, storage, tensors, views and interop."""
