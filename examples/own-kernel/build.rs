fn main() -> Result<(), gridsync_builder::Error> {
    gridsync_builder::PtxBuilder::new("kernels").build()?;
    Ok(())
}
