import { Link } from 'wouter';
import { PageHeader } from '../components/ui.tsx';

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is no such page. <Link href="/">Go to the overview</Link>.
      </p>
    </>
  );
}
